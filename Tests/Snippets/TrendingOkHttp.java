// The README's Kotlin OkHttp block ("Using it from an app"), line for line in Java, because
// the build machines have OkHttp (Debian's libokhttp-java, 3.13) and a JDK but no Kotlin
// compiler. Kotlin's properties are getters here (`response.code` is `response.code()`),
// `use` is try-with-resources and `check` throws IllegalStateException. Tests/Snippets/run.sh
// compiles and runs this against the proxy, and first checks that it is still the Kotlin's
// twin: every string the Kotlin holds is a string here, every member it names is called here.
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.json.JSONArray;
import org.json.JSONObject;

public class TrendingOkHttp {
    public static void main(String[] args) throws Exception {
        String baseUrl = "https://movies-proxy.example.com/3";
        OkHttpClient client = new OkHttpClient.Builder().addInterceptor(chain ->
            chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer YOUR_APP_TOKEN").build())
        ).build();
        Request request = new Request.Builder().url(baseUrl + "/trending/movie/week").build();
        try (Response response = client.newCall(request).execute()) {
            if (!response.isSuccessful()) throw new IllegalStateException("HTTP " + response.code());
            JSONArray results = new JSONObject(response.body().string()).getJSONArray("results");
            System.out.println(results.getJSONObject(0).getString("title"));
        }
    }
}
