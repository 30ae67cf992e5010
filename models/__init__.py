# mirage_tui.guard reads this line (without importing the package) to tell ours from a namesake
MIRAGE_TUI_PACKAGE = "models"
