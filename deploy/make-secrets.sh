#!/bin/sh
# Make the secret files deploy/docker-compose.yml mounts (deploy/secrets/), each random;
# a file that exists is kept, so running it again changes nothing. The database URL is
# written from the PostgreSQL password, so the two always agree.
#
# The folder is for the owner alone; the files in it are readable, because PostgreSQL
# and the service read them inside their containers as users of their own.
set -eu
dir=${SECRETS_DIR:-$(cd "$(dirname "$0")" && pwd)/secrets}
mkdir -p "$dir"
chmod 700 "$dir"
# Never committed, whatever the repository's own ignore rules say.
printf '*\n' > "$dir/.gitignore"

random() {  # $1 characters of [A-Za-z0-9]
    LC_ALL=C tr -dc 'A-Za-z0-9' < /dev/urandom | head -c "$1"
}

write() {  # write() NAME VALUE: only if the file does not exist yet
    if [ ! -s "$dir/$1" ]; then
        printf '%s' "$2" > "$dir/$1"
        chmod 644 "$dir/$1"
        echo "made $dir/$1"
    fi
}

write django_secret_key "$(random 64)"
write postgres_password "$(random 32)"
write database_url "postgres://eval:$(cat "$dir/postgres_password")@postgres:5432/eval"
write minio_root_user "evalservice"
write minio_root_password "$(random 40)"
write health_token "$(random 40)"
