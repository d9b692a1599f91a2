module github.com/harbourlabs/tidewatch

go 1.22

toolchain go1.22.4

require (
	github.com/go-chi/chi/v5 v5.0.12
	github.com/jackc/pgx/v5 v5.6.0
	github.com/prometheus/client_golang v1.19.1
	golang.org/x/sync v0.7.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
)

require github.com/spf13/cobra v1.8.0

replace github.com/harbourlabs/geo => ../geo

exclude github.com/jackc/pgx/v5 v5.5.0
