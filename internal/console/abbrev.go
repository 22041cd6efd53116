package console

// The abbreviation tables of the built-in device types (DeviceType's
// ExecAbbrev and ConfigAbbrev): for a command word, the length of the
// shortest abbreviation the CLI reads as that word. The README's console
// tools section lists them; keep both in step.

// iosExecAbbrev is Cisco IOS at the privileged exec prompt (IOS 12.4 to
// 15.x, IOSv, IOU, Dynamips images). A CLI reads a prefix as a command
// when no other command of the image starts with it; images differ, so
// where one image has a competitor and another has not, the shorter
// length is kept ("rel": release and reload on most images, only reload
// on some).
var iosExecAbbrev = map[string]int{
	// blocked by default
	"reload":     3, // rel (release, reload)
	"write":      2, // wr (where, which-route, write)
	"erase":      2, // er (enable, eou, erase, event, exit)
	"debug":      3, // deb (debug, delete)
	"undebug":    1, // u all is the classic undebug all
	"traceroute": 2, // tr (tclsh, telnet, terminal, test, traceroute, tunnel)
	"test":       3, // tes (telnet, terminal, test)
	"format":     2, // fo (format, fsck)
	"exit":       2, // ex
	"quit":       1, // q
	"event":      2, // ev (event manager run)
	// read-only commands
	"show":     2, // sh (send, set, setup, show, slip, ssh, ...)
	"ping":     2, // pi (ping, pwd, pkcs11)
	"dir":      3, // dir (diagnostic, dir, disable, disconnect)
	"more":     3, // mor (monitor, more)
	"pwd":      2, // pw
	"terminal": 3, // ter (telnet, terminal, test)
	// other commands an operator may block
	"configure":  3, // con (configure, connect, copy: "con" is the safer end)
	"copy":       3, // cop
	"delete":     3, // del
	"clear":      3, // cle (clear, clock)
	"clock":      3, // clo
	"telnet":     3, // tel
	"ssh":        2, // ss
	"enable":     2, // en
	"disable":    4, // disa
	"logout":     4, // logo (lock, login, logout)
	"squeeze":    2, // sq
	"rename":     4, // rena (release, reload, rename, renew, resume)
	"release":    4, // rele
	"renew":      4, // rene
	"setup":      4, // setu (set, setup)
	"send":       3, // sen
	"tclsh":      3, // tcl (tclquit, tclsh)
	"archive":    2, // ar
	"monitor":    3, // mon
	"connect":    4, // conn
	"disconnect": 4, // disc
	"upgrade":    2, // up
	"verify":     2, // ve
	"mkdir":      2, // mk
	"rmdir":      2, // rm
	"undelete":   1, // u (when undebug is absent)
}

// iosConfigAbbrev is Cisco IOS in the configuration modes, for the words
// whose shortest abbreviation differs there ("do" runs an exec command:
// the rest of the line is read with iosExecAbbrev).
var iosConfigAbbrev = map[string]int{
	"exit":     2, // ex (exception, exit, exit-address-family: "ex" is the safer end)
	"end":      2, // en (enable, end)
	"do":       2,
	"no":       2,
	"default":  3, // def
	"banner":   3, // ban
	"hostname": 2, // ho
	"username": 2, // us
	"enable":   2, // en
	"aaa":      2, // aa
	"boot":     2, // bo
	"crypto":   2, // cr
	"alias":    2, // al (alias, alps: "al" is the safer end)
	"event":    2, // ev (event manager applet)
	"kron":     2, // kr
}

// vpcsAbbrev is VPCS: it reads any prefix that only one of its commands
// starts with (arp, clear, dhcp, disconnect, echo, help, history, ip,
// load, neighbor, ping, quit, relay, rlogin, save, set, show, sleep,
// tracer, version, write, zzz). Its trace command is "tracer", so every
// prefix of "traceroute" down to "t" runs it.
var vpcsAbbrev = map[string]int{
	"traceroute": 1, "tracer": 1, "tracert": 1,
	"show": 2, "ping": 1, "save": 2, "write": 1, "set": 2, "sleep": 2,
	"quit": 1, "load": 1, "clear": 1, "ip": 1, "dhcp": 2, "disconnect": 2,
	"relay": 2, "rlogin": 2, "echo": 1, "help": 2, "history": 2, "version": 1,
	"neighbor": 1, "arp": 1, "zzz": 1,
}
