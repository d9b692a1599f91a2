import sys

# TODO: read the config file
def main():
    print('hi')  # TODO: use logging
    return 0

# parse arguments here
