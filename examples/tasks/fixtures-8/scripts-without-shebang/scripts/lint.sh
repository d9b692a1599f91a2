#!/bin/sh
ruff check .
