"""One module per screen of the wizard."""
