// The entry point (a fixture: never compiled).
