/// amodb's genre ids (TMDB's) and their names in the languages the sandbox translates.
enum GenreNames {
    /// Movie genre ids.
    static let movieGenres = [
        28, 12, 16, 35, 80, 99, 18, 10751, 14, 36, 27, 10402, 9648, 10749, 878, 10770, 53, 10752, 37,
    ]
    /// TV genre ids.
    static let tvGenres = [10759, 16, 35, 80, 99, 18, 10751, 10762, 9648, 10763, 10764, 10765, 10766, 10767, 10768, 37]

    /// A genre's name in a resolved language; English where no translation is kept.
    static func name(of id: Int, in language: String) -> String {
        translations[language]?[id] ?? english[id] ?? "Unknown"
    }

    private static let english: [Int: String] = [
        28: "Action", 12: "Adventure", 16: "Animation", 35: "Comedy", 80: "Crime", 99: "Documentary",
        18: "Drama", 10751: "Family", 14: "Fantasy", 36: "History", 27: "Horror", 10402: "Music",
        9648: "Mystery", 10749: "Romance", 878: "Science Fiction", 10770: "TV Movie", 53: "Thriller",
        10752: "War", 37: "Western", 10759: "Action & Adventure", 10762: "Kids", 10763: "News",
        10764: "Reality", 10765: "Sci-Fi & Fantasy", 10766: "Soap", 10767: "Talk", 10768: "War & Politics",
    ]

    private static let translations: [String: [Int: String]] = [
        "de-DE": [
            28: "Action", 12: "Abenteuer", 16: "Animation", 35: "Komödie", 80: "Krimi", 99: "Dokumentarfilm",
            18: "Drama", 10751: "Familie", 14: "Fantasy", 36: "Historie", 27: "Horror", 10402: "Musik",
            9648: "Mystery", 10749: "Liebesfilm", 878: "Science Fiction", 10770: "TV-Film", 53: "Thriller",
            10752: "Kriegsfilm", 37: "Western",
        ],
        "fr-FR": [
            28: "Action", 12: "Aventure", 16: "Animation", 35: "Comédie", 80: "Crime", 99: "Documentaire",
            18: "Drame", 10751: "Familial", 14: "Fantastique", 36: "Histoire", 27: "Horreur", 10402: "Musique",
            9648: "Mystère", 10749: "Romance", 878: "Science-Fiction", 10770: "Téléfilm", 53: "Thriller",
            10752: "Guerre", 37: "Western",
        ],
        "es-ES": [
            28: "Acción", 12: "Aventura", 16: "Animación", 35: "Comedia", 80: "Crimen", 99: "Documental",
            18: "Drama", 10751: "Familia", 14: "Fantasía", 36: "Historia", 27: "Terror", 10402: "Música",
            9648: "Misterio", 10749: "Romance", 878: "Ciencia ficción", 10770: "Película de TV", 53: "Suspense",
            10752: "Bélica", 37: "Western",
        ],
        "ja-JP": [
            28: "アクション", 12: "アドベンチャー", 16: "アニメーション", 35: "コメディ", 80: "犯罪", 99: "ドキュメンタリー",
            18: "ドラマ", 10751: "ファミリー", 14: "ファンタジー", 36: "履歴", 27: "ホラー", 10402: "音楽",
            9648: "謎", 10749: "ロマンス", 878: "サイエンスフィクション", 10770: "テレビ映画", 53: "スリラー",
            10752: "戦争", 37: "西洋",
        ],
    ]
}
