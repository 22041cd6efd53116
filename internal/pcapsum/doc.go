// Package pcapsum reads a pcap stream (as GNS3 streams a link capture)
// and sums it up for a model that troubleshoots a lab: protocol counts,
// the top conversations, the facts that reveal lab faults (ARP requests
// without a reply, ICMP echoes without a reply and unreachables, OSPF
// hello and DBD parameters per router and their mismatches, BGP OPEN and
// NOTIFICATION, spanning-tree bridges and roles, CDP and LLDP neighbours,
// TCP resets and retransmissions) and the first packets as short lines.
//
// Decoding is pure Go and our own: small bounded parsers of the classic
// pcap format, Ethernet, 802.1Q, ARP, IPv4, IPv6, TCP, UDP, ICMP, OSPF,
// BGP, BPDUs, CDP and LLDP (the general packet library they replaced,
// whose init tables cost every process megabytes, is only the tests'
// oracle), streaming: one packet at a time in a reused buffer, every
// table bounded, so a capture of any size is read within a few hundred
// KiB. Everything in a capture is untrusted: lengths are checked before
// every read, and the text a device sends (CDP device ids, LLDP names)
// is cut short and stripped of control characters.
//
// # Filter grammar
//
// A filter (ParseFilter) keeps the packets it matches; the others are
// read and counted as scanned only. It is at most 200 characters of
// words separated by spaces, case-insensitive:
//
//	filter := clause { "or" clause }
//	clause := atom { ["and"] atom }
//	atom   := ["not"] primitive
//	primitive := PROTOCOL | "host" ADDRESS | ADDRESS | "port" N | "vlan" N
//
// PROTOCOL is one of arp, ip (IPv4), ipv6, icmp (ICMP and ICMPv6), tcp,
// udp, ospf, bgp, stp, cdp, lldp, vlan (802.1Q tagged). ADDRESS is an IPv4
// or IPv6 address (source, destination, or an ARP sender or target) or a
// MAC address (source or destination). "port" N matches a TCP or UDP
// source or destination port; "vlan" N an 802.1Q VLAN id. "and" binds
// tighter than "or"; no parentheses. Examples: "ospf", "arp or icmp",
// "tcp port 179", "host 10.0.0.1 and not arp", "vlan 10 stp".
package pcapsum
