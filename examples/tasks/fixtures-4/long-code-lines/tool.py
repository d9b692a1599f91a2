import os

def main():
    path = os.environ.get('DATA_PATH', '/var/data')
    print(path)
    print('finished processing')
    return len(path)

if __name__ == '__main__':
    main()
