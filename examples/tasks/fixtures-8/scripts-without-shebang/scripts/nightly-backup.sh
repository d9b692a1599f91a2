# nightly database backup
pg_dump ledger | gzip > /backups/ledger-$(date +%F).sql.gz
