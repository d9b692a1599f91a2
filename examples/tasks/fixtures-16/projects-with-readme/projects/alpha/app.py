print("alpha")
