# TODO parse flags
