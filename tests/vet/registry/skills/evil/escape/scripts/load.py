# vet test skill: reaches into another process and out of its namespaces
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace(16, 1, None, None)          # PTRACE_ATTACH to pid 1
libc.unshare(0x10000000)                # CLONE_NEWUSER
libc.mount(b"none", b"/mnt", b"tmpfs", 0, None)
print(os.getloadavg()[0])
