package storetest

// Question1KiB is a 1 KiB user message as a user writes one (prose, no
// repeats), for tests and benchmarks that count bytes: it compresses as
// real text does, where a repeated phrase would shrink to nothing.
const Question1KiB = `My lab has three routers (R1, R2, R3) running OSPF in area 0 and a VPCS
host behind each one. Since I changed the cost on R2's link towards R3, PC1 can
still ping PC2 but not PC3, and traceroute from PC1 stops after R2 with
timeouts. The neighbor table on R2 shows R3 in FULL state, yet the route to
10.3.0.0/24 is missing from R2's routing table, while R1 learns it through R2
with an odd metric. I already checked that the interfaces are up, that the
network statements cover the VPCS subnets and that no passive-interface is set
on the transit links. Could a mismatched MTU or hello timer explain it, or is
it more likely the distribute-list I added last week on R3 to filter a test
prefix? Please look at the running configurations of R2 and R3, compare their
OSPF settings, and tell me which command to change, but do not reload anything
or erase a configuration without asking me first. The lab must stay up during
the workshop tomorrow, so I would like the smallest change that fixes it.
Thank you!`
