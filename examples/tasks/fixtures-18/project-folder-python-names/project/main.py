from utils import load


def main():
    print(load('data.json'))


if __name__ == '__main__':
    main()
