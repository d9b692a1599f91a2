from utils import load


def test_load_returns_dict():
    assert isinstance(load('data.json'), dict)
