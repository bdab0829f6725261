#!/bin/sh
# Runs a command (exec, same PID) with the hostname "localhost" in a UTS namespace of its
# own. Slurm daemons look up their own hostname (slurmctld binds its port to that
# address under NoCtldInAddrAny); "localhost" resolves on every Debian system, the
# machine's own name need not. Needs root and unshare (util-linux, always installed).
exec unshare --uts -- sh -c 'hostname localhost && exec "$@"' as-localhost "$@"
