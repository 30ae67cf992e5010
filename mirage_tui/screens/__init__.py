"""The app's screens, one per module (a package where a screen has parts of its own). Every
screen derives from :mod:`.base`, which gives it the app's workbench and its palette."""
