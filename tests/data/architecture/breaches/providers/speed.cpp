// A moved file back in its old folder (a fixture: never compiled).
