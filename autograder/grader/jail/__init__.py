"""The processes learner code runs in: the jailed worker (`worker`), its jail as root (`sandbox`, `jailhost`,
`mounts`) and without root (`userjail`), what it may read (`jailpaths`, `jailside`), the jail's trial
(`jailprobe`), and the one fork server every worker, judge and headless kernel is forked from (`forkserver`,
`forking`, `headless`)."""
