def main():
    print("tapline")
