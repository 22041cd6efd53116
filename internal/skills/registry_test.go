package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write creates the files of a skills directory under a new temporary
// directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The built-in skills cover the platforms and faults the copilot needs,
// each scenario with the steps to inject, verify and undo it.
func TestBuiltin(t *testing.T) {
	set, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	c := set.Counts()
	if c.Devices < 4 || c.Scenarios < 12 || c.Topics < 5 {
		t.Errorf("counts %+v: want at least 4 devices, 5 topics and 12 scenarios", c)
	}
	for _, tc := range []struct{ name, want string }{
		{"cisco_ios_telnet", "cisco_ios_telnet"}, {"IOS", "cisco_ios_telnet"}, {"iol", "cisco_ios_telnet"}, {"dynamips", "cisco_ios_telnet"},
		{"vpcs", "vpcs"}, {"gns3_vpcs_telnet", "vpcs"}, {" FRR ", "frr"}, {"linux", "linux_host"}, {"alpine", "linux_host"},
		{"junos", ""}, {"", ""}, {"../device/vpcs", ""},
	} {
		p, ok := set.Platform(tc.name)
		switch {
		case tc.want == "" && ok:
			t.Errorf("Platform(%q) = %s, want none", tc.name, p.DeviceType)
		case tc.want != "" && (!ok || p.DeviceType != tc.want):
			t.Errorf("Platform(%q) = %v, %v; want %s", tc.name, p, ok, tc.want)
		}
	}
	for _, p := range set.Platforms() {
		if len(p.DisplayCommands) == 0 || len(p.Prompts) == 0 || len(p.Avoid) == 0 || p.Source != "builtin" {
			t.Errorf("platform %s lacks display commands, prompts or what to avoid, or is not builtin: %+v", p.DeviceType, p)
		}
	}
	ios, _ := set.Platform("ios")
	for _, topic := range []string{"ospf", "bgp", "switching", "acl", "interfaces", "static"} {
		if ios.Topics[topic] == nil || len(ios.Topics[topic].DisplayCommands) == 0 {
			t.Errorf("cisco_ios_telnet has no topic %s with show commands", topic)
		}
	}
	for _, want := range []string{"ospf_area_mismatch", "ospf_hello_mismatch", "ospf_mtu_mismatch", "wrong_access_vlan",
		"trunk_vlan_not_allowed", "acl_drop", "interface_shutdown", "wrong_default_gateway", "duplicate_ip",
		"static_route_to_nowhere", "bgp_wrong_remote_as", "link_packet_loss"} {
		sc, ok := set.Scenario(want)
		if !ok {
			t.Errorf("no scenario %s", want)
			continue
		}
		if len(sc.Inject) == 0 || len(sc.Verify) == 0 || len(sc.Undo) == 0 || len(sc.Symptoms) == 0 || sc.Name == "" {
			t.Errorf("scenario %s lacks inject, verify, undo, symptoms or title: %+v", want, sc)
		}
	}
}

// A directory in the layout of the GNS3 skills repository adds platforms,
// topics and scenarios and overrides built-in ones (matched by device
// type or alias); the folders the copilot does not use are ignored.
func TestLoadDirUpstreamLayout(t *testing.T) {
	dir := write(t, map[string]string{
		"device/vpcs.yaml": `name: "VPCS from the directory"
description: "overrides ours"
device_type: "gns3_vpcs_telnet"
category: "device"
config_commands:
  ip_config:
    syntax: "ip <address>/<mask> <gateway>"
    example: "ip 10.10.0.12/24 10.10.0.254"
display_commands:
  show_ip:
    syntax: "show ip"
notes:
  - "directory note"
troubleshooting:
  ping_failed:
    - "check show ip"
command_aliases:
  show_arp: "arp"
`,
		"device/junos/_base.yaml": "name: Junos\ndevice_type: juniper_junos\ndisplay_commands:\n  route:\n    syntax: show route\n",
		"device/junos/ospf.yaml":  "device_type: juniper_junos\ntopic: ospf\nname: OSPF on Junos\ndisplay_commands:\n  nbr: show ospf neighbor\n",
		"device/cisco_ios/ospf.yaml": "device_type: cisco_ios_telnet\ntopic: ospf\nname: OSPF from the directory\n" +
			"troubleshooting:\n  stuck: one string instead of a list\n",
		"injection/extra_issues.yaml": `name: "Extra"
description: "more faults"
category: "injection"
protocols: [ospf]
issues:
  ospf_auth_mismatch:
    name: "OSPF authentication mismatch"
    description: "keys differ"
    severity: "high"
    difficulty: "intermediate"
    symptoms: ["no neighbour"]
    troubleshooting_hints: ["show ip ospf interface"]
    applicability: "OSPF with authentication"
  acl_drop:
    name: "Overridden ACL scenario"
    description: "from the directory"
`,
		"feature/topology_planner.yaml":  "this: [is, ignored",
		"packet_analysis/bgp.yaml":       "{{{ ignored",
		"prompts/teaching_assistant.md":  "ignored",
		"device/.hidden.yaml":            "{{{ ignored",
		"device/cisco_ios/deeper/x.yaml": "{{{ ignored: deeper than a topic",
	})
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	vpcs, ok := set.Platform("vpcs")
	if !ok || vpcs.Name != "VPCS from the directory" || vpcs.Source != "skills_dir:device/vpcs.yaml" || vpcs.Notes[0] != "directory note" {
		t.Errorf("vpcs not overridden by the directory: %+v", vpcs)
	}
	if p, _ := set.Platform("gns3_vpcs_telnet"); p != vpcs {
		t.Errorf("the directory's device_type does not find the platform it overrode")
	}
	if vpcs.ConfigCommands["ip_config"].Example != "ip 10.10.0.12/24 10.10.0.254" || vpcs.CommandAliases["show_arp"] != "arp" {
		t.Errorf("commands of the directory's file not read: %+v", vpcs.ConfigCommands)
	}
	junos, ok := set.Platform("juniper_junos")
	if !ok || junos.Topics["ospf"] == nil || junos.Topics["ospf"].DisplayCommands["nbr"].Syntax != "show ospf neighbor" {
		t.Errorf("new platform with a topic not loaded: %+v", junos)
	}
	ios, _ := set.Platform("ios")
	if ios.Source != "builtin" || ios.Topics["ospf"].Name != "OSPF from the directory" || ios.Topics["bgp"] == nil {
		t.Errorf("a topic file alone should replace that topic and keep the built-in base and other topics: %+v", ios.Topics["ospf"])
	}
	if got := ios.Topics["ospf"].Troubleshooting["stuck"]; len(got) != 1 || got[0] != "one string instead of a list" {
		t.Errorf("troubleshooting written as one string: %v", got)
	}
	if sc, ok := set.Scenario("ospf_auth_mismatch"); !ok || sc.Group != "extra_issues" || sc.Protocols[0] != "ospf" {
		t.Errorf("new scenario: %+v", sc)
	}
	if sc, _ := set.Scenario("acl_drop"); sc.Name != "Overridden ACL scenario" {
		t.Errorf("acl_drop not overridden: %+v", sc)
	}
	base, _ := Builtin()
	if got, want := set.Counts(), base.Counts(); got.Devices != want.Devices+1 || got.Scenarios != want.Scenarios+1 || got.Topics != want.Topics+1 {
		t.Errorf("counts %+v, built-in %+v: want one more device, topic and scenario", got, want)
	}
}

// A file that is not a valid skill fails the load with an error naming it.
func TestLoadDirBrokenFile(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"yaml syntax", "injection/bad.yaml", "name: x\nissues: [unclosed", "yaml"},
		{"not a mapping", "device/x.yaml", "- a\n- b\n", "cannot unmarshal"},
		{"empty", "device/x.yaml", "  \n", "empty file"},
		{"no device_type", "device/x.yaml", "name: X\n", "missing device_type"},
		{"base without device_type", "device/x/_base.yaml", "name: X\n", "missing device_type"},
		{"issues as a list", "injection/bad.yaml", "name: a\ndescription: b\nissues: [x]\n", "cannot unmarshal"},
		{"no issues", "injection/bad.yaml", "name: a\ndescription: b\n", "missing issues"},
		{"bad severity", "injection/bad.yaml", "name: a\ndescription: b\nissues:\n  x:\n    name: X\n    description: Y\n    severity: huge\n", "severity"},
		{"issue without description", "injection/bad.yaml", "name: a\ndescription: b\nissues:\n  x:\n    name: X\n", "missing description"},
		{"bad issue key", "injection/bad.yaml", "name: a\ndescription: b\nissues:\n  \"../x\":\n    name: X\n    description: Y\n", "invalid name"},
		{"bad topic", "device/x/bad topic!.yaml", "name: t\n", "invalid topic"},
		{"too big", "device/big.yaml", "device_type: big\nnotes:\n" + strings.Repeat("  - \"0123456789012345678901234567890123456789\"\n", MaxFileBytes/40), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, map[string]string{tc.file: tc.body, "device/good.yaml": "device_type: good\n"})
			_, err := Load(dir)
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != tc.file || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v; want a FileError naming %s with %q", err, tc.file, tc.want)
			}
		})
	}
}

// Reading stays inside the directory: a link leading out of it is
// refused (named), a link inside it is followed, and the number of files
// is bounded.
func TestLoadDirConfined(t *testing.T) {
	outside := write(t, map[string]string{"secret.yaml": "device_type: stolen\nnotes: [\"outside\"]\n", "dev/x.yaml": "device_type: stolen2\n"})
	for _, tc := range []struct {
		name, link, target string
	}{
		{"file link out", "device/evil.yaml", filepath.Join(outside, "secret.yaml")},
		{"relative link out", "device/evil.yaml", "../../" + filepath.Base(outside) + "/secret.yaml"},
		{"folder link out", "device/evil", filepath.Join(outside, "dev")},
		{"injection folder link out", "injection", outside},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, map[string]string{"device/good.yaml": "device_type: good\n"})
			if err := os.Symlink(tc.target, filepath.Join(dir, filepath.FromSlash(tc.link))); err != nil {
				t.Fatal(err)
			}
			set, err := Load(dir)
			if err == nil {
				if _, ok := set.Platform("stolen"); ok {
					t.Fatal("a file outside SKILLS_DIR was read")
				}
				t.Fatal("a link out of SKILLS_DIR was not refused")
			}
			if !strings.Contains(err.Error(), "device") && !strings.Contains(err.Error(), "injection") {
				t.Errorf("the error does not name the link: %v", err)
			}
		})
	}
	t.Run("link inside", func(t *testing.T) {
		dir := write(t, map[string]string{"shared/junos.yaml": "device_type: juniper_junos\n"})
		if err := os.Symlink("../shared/junos.yaml", filepath.Join(dir, "device", "junos.yaml")); err != nil {
			if err := os.MkdirAll(filepath.Join(dir, "device"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../shared/junos.yaml", filepath.Join(dir, "device", "junos.yaml")); err != nil {
				t.Fatal(err)
			}
		}
		set, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := set.Platform("juniper_junos"); !ok {
			t.Error("a link inside SKILLS_DIR was not followed")
		}
	})
	t.Run("too many files", func(t *testing.T) {
		files := map[string]string{}
		for i := range MaxFiles + 1 {
			files["device/d"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i)+".yaml"] = "device_type: d" + itoa(i) + "\n"
		}
		_, err := Load(write(t, files))
		if err == nil || !strings.Contains(err.Error(), "too many skill files") {
			t.Fatalf("Load: %v; want too many files", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "SKILLS_DIR") {
			t.Fatalf("Load: %v; want an error about SKILLS_DIR", err)
		}
	})
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// Reload puts a directory's skills in use only when every file loads: a
// broken file is named and the previous skills stay.
func TestRegistryReload(t *testing.T) {
	dir := write(t, map[string]string{"injection/a.yaml": "name: a\ndescription: b\nissues:\n  first_fault:\n    name: F\n    description: D\n"})
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := r.Current()
	if _, ok := before.Scenario("first_fault"); !ok {
		t.Fatal("directory scenario not loaded")
	}
	bad := filepath.Join(dir, "injection", "b.yaml")
	if err := os.WriteFile(bad, []byte("name: [broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = r.Reload()
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != "injection/b.yaml" {
		t.Fatalf("Reload: %v; want a FileError naming injection/b.yaml", err)
	}
	if r.Current() != before {
		t.Fatal("a failed reload replaced the skills in use")
	}
	if err := os.WriteFile(bad, []byte("name: b\ndescription: b\nissues:\n  second_fault:\n    name: S\n    description: D\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := r.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Current().Scenario("second_fault"); !ok || c != r.Current().Counts() || c.Scenarios != before.Counts().Scenarios+1 {
		t.Fatalf("reload after the fix: counts %+v", c)
	}

	// A directory that does not load at start: the built-in skills are
	// served and the error names the file.
	broken := write(t, map[string]string{"device/x.yaml": "name: no type\n"})
	r2, err := New(broken)
	if !errors.As(err, &fe) || fe.File != "device/x.yaml" || r2 == nil {
		t.Fatalf("New: %v", err)
	}
	if base, _ := Builtin(); r2.Current().Counts() != base.Counts() {
		t.Errorf("the registry of a broken directory does not serve the built-in skills: %+v", r2.Current().Counts())
	}
}
