#!/usr/bin/env bash
# Deploy tidewatch to the staging hosts.   
set -euo pipefail

HOSTS="stage-01 stage-02"  
RELEASE="${1:?usage: deploy.sh <release>}"
	
for host in $HOSTS; do	
    echo "==> $host"
    ssh "deploy@$host" "mkdir -p /srv/tidewatch/releases/$RELEASE"  
    rsync -az --delete  build/ "deploy@$host:/srv/tidewatch/releases/$RELEASE/"
    ssh "deploy@$host" "ln -sfn /srv/tidewatch/releases/$RELEASE /srv/tidewatch/current" 	 
done
    
cat <<EOF
	Deployed release $RELEASE   
	to: $HOSTS
EOF
echo  "done."
