package pcapsum

// Summary is what a capture says, for a model that troubleshoots a lab.
// Every list is bounded; empty sections are left out.
type Summary struct {
	// LinkType is the capture's data link type ("Ethernet", "C_HDLC", ...).
	LinkType string `json:"link_type"`
	// Filter is the filter applied, as given.
	Filter string `json:"filter,omitempty"`
	// Packets counts the packets kept (those the filter matched);
	// Scanned the packets read; Bytes the kept packets' wire bytes.
	Packets int   `json:"packets"`
	Scanned int   `json:"scanned"`
	Bytes   int64 `json:"bytes"`
	// Malformed counts packets that could not be decoded at all.
	Malformed int `json:"malformed,omitempty"`
	// FirstPacket is the time of the first packet kept (UTC, RFC 3339);
	// DurationSeconds the time from it to the last one.
	FirstPacket     string  `json:"first_packet,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
	// Stopped says why reading ended (see the Stop* constants).
	Stopped string `json:"stopped"`
	// Findings are the facts that point at lab faults, one sentence each.
	Findings []string `json:"findings"`
	// Protocols counts the kept packets by protocol (a packet counts for
	// each protocol it carries: ipv4, tcp and bgp).
	Protocols map[string]int `json:"protocols"`
	// Conversations are the busiest (source, destination, protocol)
	// triples; ConversationsTotal counts them all.
	Conversations      []Conversation `json:"conversations"`
	ConversationsTotal int            `json:"conversations_total"`

	ARP  *ARPSummary  `json:"arp,omitempty"`
	ICMP *ICMPSummary `json:"icmp,omitempty"`
	OSPF *OSPFSummary `json:"ospf,omitempty"`
	BGP  *BGPSummary  `json:"bgp,omitempty"`
	STP  *STPSummary  `json:"stp,omitempty"`
	CDP  []Neighbour  `json:"cdp,omitempty"`
	LLDP []Neighbour  `json:"lldp,omitempty"`
	TCP  *TCPSummary  `json:"tcp,omitempty"`
	// FirstPackets are the first kept packets, one short line each:
	// seconds since the first, source > destination, protocol, details.
	FirstPackets []string `json:"first_packets"`
}

// Why reading stopped.
const (
	// StopMaxPackets: the filter kept MaxPackets packets.
	StopMaxPackets = "max_packets"
	// StopMaxScanned: MaxScanned packets were read.
	StopMaxScanned = "max_scanned"
	// StopEnd: the stream ended.
	StopEnd = "end_of_stream"
	// StopContext: the context ended (the time was up, or the call was
	// cancelled); the caller tells which.
	StopContext = "context"
	// StopCorrupt: the stream is not valid pcap past this point.
	StopCorrupt = "corrupt_stream"
)

// Conversation is traffic from one address to another in one protocol.
type Conversation struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	Protocol string `json:"protocol"`
	Packets  int    `json:"packets"`
	Bytes    int64  `json:"bytes"`
}

// ARPSummary is what ARP says: who asks for whom without an answer, and
// addresses claimed by two MACs.
type ARPSummary struct {
	Requests   int `json:"requests"`
	Replies    int `json:"replies"`
	Gratuitous int `json:"gratuitous,omitempty"`
	// Unanswered are the addresses asked for that never replied.
	Unanswered []ARPAsk `json:"unanswered,omitempty"`
	// DuplicateIPs are addresses that two or more MACs claim.
	DuplicateIPs []DuplicateIP `json:"duplicate_ips,omitempty"`
}

// ARPAsk is an ARP who-has without a reply.
type ARPAsk struct {
	Target   string `json:"target"`
	AskedBy  string `json:"asked_by"`
	Requests int    `json:"requests"`
}

// DuplicateIP is an address claimed by several MACs.
type DuplicateIP struct {
	IP   string   `json:"ip"`
	MACs []string `json:"macs"`
}

// ICMPSummary is what ICMP (and ICMPv6 echo) says.
type ICMPSummary struct {
	EchoRequests int `json:"echo_requests"`
	EchoReplies  int `json:"echo_replies"`
	// Unanswered are echo requests without a reply in the capture.
	Unanswered []EchoPair `json:"unanswered,omitempty"`
	// Unreachable are destination-unreachable messages; TimeExceeded the
	// TTL-expired ones (a routing loop, or a traceroute).
	Unreachable  []ICMPError `json:"unreachable,omitempty"`
	TimeExceeded []ICMPError `json:"time_exceeded,omitempty"`
	Redirects    int         `json:"redirects,omitempty"`
}

// EchoPair counts echo requests from Src to Dst that got no reply.
type EchoPair struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	Requests int    `json:"requests"`
}

// ICMPError is an ICMP error a router or host sent: From sent it, about
// a packet for About.
type ICMPError struct {
	From   string `json:"from"`
	About  string `json:"about,omitempty"`
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// OSPFSummary is what OSPFv2 says: the routers on the link, their hello
// parameters, and the parameters they disagree on.
type OSPFSummary struct {
	Packets    map[string]int `json:"packets"`
	Routers    []OSPFRouter   `json:"routers"`
	Mismatches []string       `json:"mismatches,omitempty"`
}

// OSPFRouter is what one router's hellos (and DBDs) announce.
type OSPFRouter struct {
	RouterID      string `json:"router_id"`
	Source        string `json:"source"`
	Area          string `json:"area"`
	HelloInterval int    `json:"hello_interval,omitempty"`
	DeadInterval  int    `json:"dead_interval,omitempty"`
	NetworkMask   string `json:"network_mask,omitempty"`
	Priority      int    `json:"priority"`
	DR            string `json:"dr,omitempty"`
	BDR           string `json:"bdr,omitempty"`
	// Neighbours counts the routers its last hello lists as seen.
	Neighbours int `json:"neighbours"`
	// Stub is true when its hellos clear the E bit (a stub or NSSA area).
	Stub bool `json:"stub,omitempty"`
	// AuthType is 0 none, 1 simple password, 2 MD5.
	AuthType int `json:"auth_type"`
	// MTU is the interface MTU of its database descriptions (0: none
	// seen).
	MTU    int `json:"mtu,omitempty"`
	Hellos int `json:"hellos"`
}

// BGPSummary is what BGP says.
type BGPSummary struct {
	Messages      map[string]int    `json:"messages"`
	Opens         []BGPOpen         `json:"opens,omitempty"`
	Notifications []BGPNotification `json:"notifications,omitempty"`
}

// BGPOpen is an OPEN message: the speaker's AS, hold time and id.
type BGPOpen struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	AS       uint32 `json:"as"`
	HoldTime int    `json:"hold_time"`
	RouterID string `json:"router_id"`
	Version  int    `json:"version"`
}

// BGPNotification is a NOTIFICATION: why a session was closed.
type BGPNotification struct {
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Code    int    `json:"code"`
	Subcode int    `json:"subcode"`
	Error   string `json:"error"`
}

// STPSummary is what spanning-tree BPDUs say.
type STPSummary struct {
	BPDUs           int         `json:"bpdus"`
	TopologyChanges int         `json:"topology_changes,omitempty"`
	Bridges         []STPBridge `json:"bridges"`
	// Roots are the root bridges the BPDUs name (one per VLAN when
	// converged).
	Roots []string `json:"roots"`
}

// STPBridge is one sender of BPDUs on the link, on one port.
type STPBridge struct {
	BridgeID string `json:"bridge_id"`
	PortID   string `json:"port_id"`
	RootID   string `json:"root_id"`
	RootCost uint32 `json:"root_cost"`
	// Protocol is stp, rstp or mstp, with "pvst+" for Cisco's per-VLAN
	// BPDUs.
	Protocol string `json:"protocol"`
	// Role is the sender's port role (RSTP); a plain STP sender of
	// configuration BPDUs is the designated port of the link.
	Role  string `json:"role"`
	VLAN  int    `json:"vlan,omitempty"`
	BPDUs int    `json:"bpdus"`
}

// TCPSummary is what TCP says about broken sessions.
type TCPSummary struct {
	Resets          []TCPFlow `json:"resets,omitempty"`
	Retransmissions int       `json:"retransmissions"`
	// UnansweredSYN are connection attempts that got neither a SYN-ACK
	// nor a reset (a filter dropping them, a host down).
	UnansweredSYN []TCPFlow `json:"unanswered_syn,omitempty"`
}

// TCPFlow counts segments of one direction of a TCP connection.
type TCPFlow struct {
	Flow  string `json:"flow"`
	Count int    `json:"count"`
}
