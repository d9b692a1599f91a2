"""tapline - sap line monitor."""
