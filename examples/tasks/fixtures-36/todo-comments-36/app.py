import json

# TODO: load config from env
CONFIG_PATH = "config.json"
todo_items = []  # list of todo items


def add(item):
    todo_items.append(item)  # TODO: validate item


def save():
    print("TODO: nothing here")
    with open(CONFIG_PATH, "w") as f:
        json.dump(todo_items, f)
    # TODO:handle write errors


# NOTE: keep TODO list small
def count():
    return len(todo_items)    # TODO: cache this
