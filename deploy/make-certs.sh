#!/usr/bin/env bash
# make-certs.sh DIR [NAME ...]: a certificate authority and TLS certificates for a Dask cluster.
#
# Writes into DIR (created, mode 700):
#   ca.pem                      the cluster's own certificate authority (give it to every process)
#   ca-key.pem                  its private key: keep it off the cluster, it signs new certificates
#   scheduler.pem/-key.pem      the scheduler's certificate and key
#   worker.pem/-key.pem         the workers' certificate and key
#   client.pem/-key.pem         the clients' (dasktree's) certificate and key
# Keys are mode 600. Every certificate names localhost, 127.0.0.1 and each NAME given (host names or
# IP addresses the processes are reached at, e.g. `scheduler` in Compose); Dask checks the chain to
# ca.pem in both directions (client certificates required), not the names.
# DASKTREE_CERT_DAYS (default 365) is how long the certificates are valid.
#
#   deploy/make-certs.sh ./certs scheduler dasktree-scheduler
#   dask scheduler --tls-ca-file certs/ca.pem --tls-cert certs/scheduler.pem --tls-key certs/scheduler-key.pem
#   dasktree fit data/ --target label --out model.json --scheduler tls://127.0.0.1:8786 \
#       --tls-ca-file certs/ca.pem --tls-cert certs/client.pem --tls-key certs/client-key.pem
set -euo pipefail

if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
    echo "usage: make-certs.sh DIR [NAME ...]  (a CA and scheduler/worker/client certificates in DIR)" >&2
    exit 2
fi
command -v openssl >/dev/null || { echo "make-certs.sh: error: needs the openssl command" >&2; exit 1; }
dir=$1; shift
days=${DASKTREE_CERT_DAYS:-365}
case $days in ''|*[!0-9]*) echo "make-certs.sh: error: DASKTREE_CERT_DAYS must be a number of days, got '$days'" >&2; exit 2;; esac

san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
    if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then san="$san,IP:$name"; else san="$san,DNS:$name"; fi
done

umask 077
mkdir -p "$dir"
chmod 700 "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -days "$days" -subj "/CN=dasktree cluster CA" \
    -keyout "$work/ca-key.pem" -out "$work/ca.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
for role in scheduler worker client; do
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -subj "/CN=dasktree $role" \
        -keyout "$work/$role-key.pem" -out "$work/$role.csr" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' \
        "$san" > "$work/$role.ext"
    openssl x509 -req -in "$work/$role.csr" -CA "$work/ca.pem" -CAkey "$work/ca-key.pem" -CAcreateserial \
        -days "$days" -sha256 -extfile "$work/$role.ext" -out "$work/$role.pem" 2>/dev/null
done
# all or nothing: the files appear in DIR only once every one is made
for f in ca ca-key scheduler scheduler-key worker worker-key client client-key; do
    mv "$work/$f.pem" "$dir/$f.pem"
done
chmod 644 "$dir/ca.pem" "$dir/scheduler.pem" "$dir/worker.pem" "$dir/client.pem"
echo "wrote a CA and scheduler, worker and client certificates (valid $days days) to $dir"
