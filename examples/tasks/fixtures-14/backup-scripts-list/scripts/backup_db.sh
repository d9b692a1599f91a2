#!/bin/sh
# dump the recipes database to /mnt/backup
pg_dump recipes > /mnt/backup/recipes.sql
