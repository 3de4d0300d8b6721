# Sourced by the scripts that run npm (build-agent-image.sh,
# install-agent-clis.sh): npm and node trust the system's certificate bundle.
# A machine that reaches the npm registry through a proxy installs the proxy's
# authority into /usr/local/share/ca-certificates, and update-ca-certificates
# folds it into /etc/ssl/certs/ca-certificates.crt; node's own bundle lacks it,
# and only root's global npmrc may name the system's (cafile). The variable
# adds the system bundle to node's, for root and a plain user alike, and
# leaves a caller's own NODE_EXTRA_CA_CERTS or npm cafile alone.
# shellcheck shell=bash
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
