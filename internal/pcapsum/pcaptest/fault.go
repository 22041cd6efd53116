package pcaptest

// Addresses of FaultCapture.
const (
	R1IP = "10.0.12.1"
	R2IP = "10.0.12.2"
	PCIP = "10.0.12.10"
	// Missing is the address PC asks for and nobody answers.
	Missing = "10.0.12.99"
)

// FaultCapture is a capture of a broken link between routers R1 and R2
// (with a PC on the segment): R1 sends OSPF hellos every 10s (dead 40s),
// R2 every 5s (dead 20s), so they never become neighbours; their DBDs
// announce MTU 1500 and 1400; the PC asks ARP for Missing three times
// without a reply (and gets a reply for R1); the PC pings R2 twice
// without a reply and R1 once with one; R1 answers a BGP connection from
// R2 with a reset, and R2 sends a BGP NOTIFICATION "bad peer AS".
func FaultCapture() *Capture {
	r1, r2, pc := MAC(1), MAC(2), MAC(10)
	c := New()
	c.Add(OSPFHello(r1, R1IP, "1.1.1.1", "0.0.0.0", "255.255.255.0", 10, 40))
	c.Add(OSPFHello(r2, R2IP, "2.2.2.2", "0.0.0.0", "255.255.255.0", 5, 20))
	c.Add(ARP(false, pc, PCIP, Missing, nil))
	c.Add(ARP(false, pc, PCIP, R1IP, nil))
	c.Add(ARP(true, r1, R1IP, PCIP, pc))
	c.Add(ICMPEcho(false, pc, r1, PCIP, R1IP, 7, 1))
	c.Add(ICMPEcho(true, r1, pc, R1IP, PCIP, 7, 1))
	c.Add(ICMPEcho(false, pc, r2, PCIP, R2IP, 8, 1))
	c.Add(ARP(false, pc, PCIP, Missing, nil))
	c.Add(ICMPEcho(false, pc, r2, PCIP, R2IP, 8, 2))
	c.Add(OSPFHello(r2, R2IP, "2.2.2.2", "0.0.0.0", "255.255.255.0", 5, 20))
	c.Add(OSPFDBD(r1, R1IP, "1.1.1.1", "0.0.0.0", 1500))
	c.Add(OSPFDBD(r2, R2IP, "2.2.2.2", "0.0.0.0", 1400))
	c.Add(TCP(r2, r1, R2IP, 40000, R1IP, 179, 1000, SYN, nil))
	c.Add(TCP(r1, r2, R1IP, 179, R2IP, 40000, 0, RST|ACK, nil))
	c.Add(TCP(r2, r1, R2IP, 40001, R1IP, 179, 5000, PSH|ACK, BGPNotification(2, 2)))
	c.Add(ARP(false, pc, PCIP, Missing, nil))
	return c
}
