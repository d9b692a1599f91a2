#!/bin/sh
# copy new photos to the NAS
rsync -a ~/Pictures/ nas:/photos/
