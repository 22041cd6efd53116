package gns3

// Project statuses reported by GNS3 v3.
const (
	StatusOpened = "opened"
	StatusClosed = "closed"
)

// Project is a GNS3 v3 project (GET /v3/projects/{project_id}).
type Project struct {
	ProjectID           string     `json:"project_id"`
	Name                string     `json:"name"`
	Status              string     `json:"status"`
	Path                string     `json:"path,omitempty"`
	Filename            string     `json:"filename,omitempty"`
	AutoStart           bool       `json:"auto_start"`
	AutoOpen            bool       `json:"auto_open"`
	AutoClose           bool       `json:"auto_close"`
	SceneHeight         int        `json:"scene_height"`
	SceneWidth          int        `json:"scene_width"`
	Zoom                int        `json:"zoom"`
	ShowLayers          bool       `json:"show_layers"`
	SnapToGrid          bool       `json:"snap_to_grid"`
	ShowGrid            bool       `json:"show_grid"`
	GridSize            int        `json:"grid_size"`
	DrawingGridSize     int        `json:"drawing_grid_size"`
	ShowInterfaceLabels bool       `json:"show_interface_labels"`
	Supplier            *Supplier  `json:"supplier"`
	Variables           []Variable `json:"variables"`
}

// Supplier is the optional supplier of a project.
type Supplier struct {
	Logo string `json:"logo"`
	URL  string `json:"url,omitempty"`
}

// Variable is a project variable.
type Variable struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// Node statuses reported by GNS3 v3.
const (
	NodeStarted   = "started"
	NodeStopped   = "stopped"
	NodeSuspended = "suspended"
)

// Node is a GNS3 v3 node (GET /v3/projects/{project_id}/nodes).
type Node struct {
	NodeID           string         `json:"node_id"`
	ProjectID        string         `json:"project_id"`
	ComputeID        string         `json:"compute_id"`
	TemplateID       string         `json:"template_id,omitempty"`
	Name             string         `json:"name"`
	NodeType         string         `json:"node_type"` // vpcs, qemu, dynamips, iou, docker, ethernet_switch, ethernet_hub, cloud, nat, ...
	Status           string         `json:"status"`    // started, stopped, suspended
	Console          *int           `json:"console"`   // null for nodes without a console
	ConsoleHost      string         `json:"console_host"`
	ConsoleType      string         `json:"console_type"` // telnet, vnc, spice, http, https, none
	ConsoleAutoStart bool           `json:"console_auto_start"`
	Aux              *int           `json:"aux"`
	AuxType          string         `json:"aux_type"`
	Properties       map[string]any `json:"properties"`
	Label            *Label         `json:"label,omitempty"`
	Symbol           string         `json:"symbol"`
	Locked           bool           `json:"locked"`
	X                int            `json:"x"`
	Y                int            `json:"y"`
	Z                int            `json:"z"`
	Width            int            `json:"width"`
	Height           int            `json:"height"`
	FirstPortName    string         `json:"first_port_name,omitempty"`
	PortNameFormat   string         `json:"port_name_format"`
	PortSegmentSize  int            `json:"port_segment_size"`
	CustomAdapters   []any          `json:"custom_adapters"`
	CommandLine      string         `json:"command_line,omitempty"`
	NodeDirectory    string         `json:"node_directory,omitempty"`
	Tags             []string       `json:"tags,omitempty"` // for example "device_type:cisco_ios_telnet"
	Ports            []Port         `json:"ports"`
}

// Port is a network port of a node.
type Port struct {
	Name          string            `json:"name"`
	ShortName     string            `json:"short_name"`
	AdapterNumber int               `json:"adapter_number"`
	PortNumber    int               `json:"port_number"`
	LinkType      string            `json:"link_type"` // ethernet, serial
	DataLinkTypes map[string]string `json:"data_link_types,omitempty"`
	AdapterType   string            `json:"adapter_type,omitempty"`
	MacAddress    string            `json:"mac_address,omitempty"`
}

// Label is the text drawn beside a node or a link end.
type Label struct {
	Text     string `json:"text"`
	Style    string `json:"style,omitempty"`
	X        *int   `json:"x"`
	Y        *int   `json:"y"`
	Rotation int    `json:"rotation"`
}

// Link is a GNS3 v3 link (GET /v3/projects/{project_id}/links).
type Link struct {
	LinkID           string         `json:"link_id"`
	ProjectID        string         `json:"project_id"`
	Nodes            []LinkEnd      `json:"nodes"`
	LinkType         string         `json:"link_type"` // ethernet, serial
	Suspend          bool           `json:"suspend"`
	Filters          map[string]any `json:"filters"`
	Capturing        bool           `json:"capturing"`
	CaptureFileName  string         `json:"capture_file_name,omitempty"`
	CaptureFilePath  string         `json:"capture_file_path,omitempty"`
	CaptureComputeID string         `json:"capture_compute_id,omitempty"`
	LinkStyle        map[string]any `json:"link_style,omitempty"`
	// ShowFiltersIcon is whether the web UI marks a link with filters by
	// an icon; only recent GNS3 v3 builds have it (nil: not reported).
	ShowFiltersIcon *bool `json:"show_filters_icon,omitempty"`
}

// LinkEnd is one end of a link: a node's adapter and port.
type LinkEnd struct {
	NodeID        string `json:"node_id"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	Label         *Label `json:"label,omitempty"`
}

// Template is a GNS3 v3 template (GET /v3/templates), reduced to the
// fields that help choose one.
type Template struct {
	TemplateID        string `json:"template_id"`
	Name              string `json:"name"`
	Category          string `json:"category"`      // router, switch, guest, firewall
	TemplateType      string `json:"template_type"` // vpcs, qemu, dynamips, iou, docker, ethernet_switch, ethernet_hub, cloud, nat, ...
	ComputeID         string `json:"compute_id"`    // may be "" (null in v3): "local" is used when creating
	Builtin           bool   `json:"builtin"`
	Symbol            string `json:"symbol"`
	DefaultNameFormat string `json:"default_name_format,omitempty"` // for example "R{0}", "PC{0}"
	ConsoleType       string `json:"console_type,omitempty"`        // telnet, vnc, none, ...
	Adapters          int    `json:"adapters,omitempty"`            // qemu, docker: number of network adapters
	PortNameFormat    string `json:"port_name_format,omitempty"`    // qemu: for example "Gi0/{0}"
	Platform          string `json:"platform,omitempty"`            // dynamips: c7200, c3745, ...
}

// Node actions of NodeAction.
const (
	NodeActionStart   = "start"
	NodeActionStop    = "stop"
	NodeActionSuspend = "suspend"
)
