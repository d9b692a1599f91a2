#!/bin/sh
# restore the recipes database from the last dump
psql recipes < /mnt/backup/recipes.sql
