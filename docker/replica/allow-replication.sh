#!/bin/sh
# Run once by the postgres image when it creates the database: lets the optional read replica
# (`docker compose --profile replica up`) stream from this server with the same password.
# A database created before this file existed: append the line by hand and reload
# (docker compose exec postgres sh -c 'echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"; pg_ctl reload').
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
