# Sphinx configuration for the harbourcal docs
project = "harbourcal"
author = "Harbour Tools"
release = "1.4.2"
html_theme = "alabaster"
