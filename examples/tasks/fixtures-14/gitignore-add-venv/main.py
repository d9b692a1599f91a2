"""Import recipes from a CSV export."""

print("hello from the recipe importer")
