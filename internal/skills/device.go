package skills

import (
	"agentchat/internal/idsyntax"

	"cmp"
	"path"
	"slices"
)

// devices reads device/: one-file platforms first, then the folders of
// a base and its topics.
func (l *loader) devices() error {
	files, dirs, err := l.entries(deviceDir)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := path.Join(deviceDir, f)
		var d deviceYAML
		if err := l.decode(p, &d); err != nil {
			return err
		}
		if d.DeviceType == "" {
			return fileErr(p, "missing device_type (the platform's key)")
		}
		l.putBase(p, d)
	}
	for _, dir := range dirs {
		if err := l.deviceFolder(path.Join(deviceDir, dir), dir); err != nil {
			return err
		}
	}
	return nil
}

// deviceFolder reads device/<dir>/: _base.yaml, then every other file as a
// topic of that platform (deeper folders are ignored).
func (l *loader) deviceFolder(folder, dir string) error {
	files, _, err := l.entries(folder)
	if err != nil {
		return err
	}
	key := ""
	if i := slices.IndexFunc(files, func(f string) bool { return stem(f) == baseFile }); i >= 0 {
		p := path.Join(folder, files[i])
		var d deviceYAML
		if err := l.decode(p, &d); err != nil {
			return err
		}
		if d.DeviceType == "" {
			return fileErr(p, "missing device_type (the platform's key)")
		}
		key = l.putBase(p, d).DeviceType
		files = slices.Delete(files, i, i+1)
	}
	for _, f := range files {
		p := path.Join(folder, f)
		var d deviceYAML
		if err := l.decode(p, &d); err != nil {
			return err
		}
		if key == "" {
			key = l.platform(cmp.Or(d.DeviceType, dir), l.src(p)).DeviceType
		}
		name := cmp.Or(d.Topic, stem(f))
		if !idsyntax.Plain(name, keyChars, 64) {
			return fileErr(p, "invalid topic name %q", name)
		}
		l.set.platforms[key].Topics[norm(name)] = &Topic{Topic: norm(name), Knowledge: d.knowledge(), Source: l.src(p)}
	}
	return nil
}

// platform returns the platform name designates (device type or alias),
// created empty when there is none.
func (l *loader) platform(name, source string) *Platform {
	if key, ok := l.set.names[norm(name)]; ok {
		return l.set.platforms[key]
	}
	p := &Platform{DeviceType: name, Topics: map[string]*Topic{}, Source: source}
	p.Name = name
	l.set.platforms[name] = p
	l.set.names[norm(name)] = name
	return p
}

// putBase sets the base of the platform d names: an existing one (by
// device type or alias) keeps its key, its aliases and its topics and
// takes everything else from d; d's own topics are added.
func (l *loader) putBase(file string, d deviceYAML) *Platform {
	p := l.platform(d.DeviceType, l.src(file))
	aliases := slices.Clone(p.Aliases)
	for _, a := range append([]string{d.DeviceType}, d.Aliases...) {
		if norm(a) != norm(p.DeviceType) && !slices.ContainsFunc(aliases, func(b string) bool { return norm(a) == norm(b) }) {
			aliases = append(aliases, a)
		}
	}
	p.Aliases = aliases
	p.Prompts = d.Prompts
	p.Knowledge = d.knowledge()
	p.Knowledge.Name = cmp.Or(p.Knowledge.Name, p.DeviceType)
	p.CommandAliases = d.CommandAliases
	p.Source = l.src(file)
	for name, k := range d.Topics {
		p.Topics[norm(name)] = &Topic{Topic: norm(name), Knowledge: k.knowledge(), Source: l.src(file)}
	}
	for _, a := range p.Aliases {
		if _, taken := l.set.names[norm(a)]; !taken {
			l.set.names[norm(a)] = p.DeviceType
		}
	}
	return p
}
