/// A behaviour scripted for a path and how many more answers it applies to.
struct ScriptedBehaviour: Sendable {
    var behaviour: Behaviour
    /// Answers left; `nil` until the scripts are cleared.
    var remaining: Int?
}
