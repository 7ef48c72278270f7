import CofferTool

// coffer: the tool. Its session commands are done by coffer-session (see `SessionCommand`).
Coffer.runFromCommandLine()
