import sqlite3
sqlite3.connect('dev.db').executescript(open('seed.sql').read())
