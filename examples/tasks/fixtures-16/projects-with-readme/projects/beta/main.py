print("beta")
