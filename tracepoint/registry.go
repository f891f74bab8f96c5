package tracepoint

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The process-wide registry of declared tracepoints.
var registry struct {
	sync.Mutex
	byName map[string]*Point
	byID   []*Point
}

// ErrExists reports a second declaration of a tracepoint name.
var ErrExists = errors.New("tracepoint already declared")

// ErrUnknown reports a tracepoint name nobody declared.
var ErrUnknown = errors.New("no such tracepoint")

// register checks p's names and adds it to the registry.
func register(p *Point) error {
	name := p.info.FullName()
	if !validCName(p.info.Provider) || !validCName(p.info.Name) {
		return fmt.Errorf("tracepoint %q: provider and name must be C identifiers", name)
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Point{}
	}
	if _, ok := registry.byName[name]; ok {
		return fmt.Errorf("tracepoint %s: %w", name, ErrExists)
	}
	p.id = uint32(len(registry.byID))
	registry.byName[name] = p
	registry.byID = append(registry.byID, p)
	return nil
}

// Lookup returns the tracepoint called "provider:name".
func Lookup(name string) (*Point, error) {
	registry.Lock()
	defer registry.Unlock()
	p, ok := registry.byName[name]
	if !ok {
		return nil, fmt.Errorf("tracepoint %s: %w", name, ErrUnknown)
	}
	return p, nil
}

// List returns the declared tracepoints, sorted by name.
func List() []*Point {
	registry.Lock()
	ps := slices.Clone(registry.byID)
	registry.Unlock()
	slices.SortFunc(ps, func(a, b *Point) int { return strings.Compare(a.Name(), b.Name()) })
	return ps
}

// byID returns the tracepoint with id, for decoding session records.
func pointByID(id uint32) *Point {
	registry.Lock()
	defer registry.Unlock()
	if int(id) < len(registry.byID) {
		return registry.byID[id]
	}
	return nil
}
