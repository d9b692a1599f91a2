# TODO: split this module
print('hi')  # TODO remove
