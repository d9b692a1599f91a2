#!/bin/sh
# remove temp files older than a week
find /tmp -mtime +7 -delete
