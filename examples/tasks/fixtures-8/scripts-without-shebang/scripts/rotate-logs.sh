
#!/bin/sh
find /var/log/app -name '*.log' -mtime +14 -delete
