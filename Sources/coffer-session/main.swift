import CofferTool

// coffer-session: the coffer tool with the session commands' work in place (see
// `SessionCommand` in CofferTool). coffer hands those commands to it; run alone, it is coffer.
SessionCommands.$work.withValue(OidcSessionWork()) {
    Coffer.runFromCommandLine()
}
