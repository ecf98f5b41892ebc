package magen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Start and End are the names of a graph's entry and exit. Connect Start to
// the first node, and the last node(s) to End. Neither can be the name of a
// node.
const (
	Start = "__start__"
	End   = "__end__"
)

// NodeFunc is the work one node does. It receives the current state and
// returns the next one. A node that needs the LLM calls Ask or Delegate and
// returns their error; see Ask for how the node runs again on resume.
type NodeFunc[S any] func(ctx context.Context, s S) (S, error)

// Routes maps each outcome a route function can return to the node that
// runs next. The outcomes label the edges in the Mermaid drawing.
type Routes map[string]string

// Graph is a workflow over the state type S, built with AddNode, AddEdge and
// AddRoute and checked once by New (or Validate). S must round-trip through
// encoding/json, because checkpoints store it as JSON.
//
// The builder methods return the graph so that calls chain. They never
// panic: every mistake is recorded and reported, all at once, by Validate.
// A Graph is not safe for concurrent modification; New takes a snapshot, so
// changing the graph afterwards does not affect an orchestrator built from it.
type Graph[S any] struct {
	nodes map[string]*graphNode[S]
	order []string // node names in the order they were added
	outs  map[string]*graphOut[S]
	froms []string // sources of edges and routes, in the order they were added
	errs  []error
}

type graphNode[S any] struct {
	name string
	fn   NodeFunc[S]
}

// graphOut is a node's single way out: a plain edge or a route.
type graphOut[S any] struct {
	to     string         // plain edge target
	route  func(S) string // routed edge, nil for a plain edge
	routes Routes
}

// targets lists where the edge can lead, in a stable order.
func (o *graphOut[S]) targets() []string {
	if o.route == nil {
		return []string{o.to}
	}
	return slices.Sorted(maps.Values(o.routes))
}

// NewGraph returns an empty graph over the state type S.
func NewGraph[S any]() *Graph[S] {
	return &Graph[S]{
		nodes: make(map[string]*graphNode[S]),
		outs:  make(map[string]*graphOut[S]),
	}
}

// AddNode adds a node under a unique name.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S]) *Graph[S] {
	switch {
	case name == "":
		g.errs = append(g.errs, fmt.Errorf("%w: a node has an empty name", ErrInvalidGraph))
		return g
	case name == Start || name == End:
		g.fail(name, "is reserved for the graph's entry or exit")
		return g
	case strings.ContainsAny(name, "\"\n\r\t`"):
		g.fail(name, "name contains a quote, backquote or control character")
		return g
	case fn == nil:
		g.fail(name, "has a nil function")
		return g
	}
	if _, dup := g.nodes[name]; dup {
		g.fail(name, "is added more than once")
		return g
	}
	g.nodes[name] = &graphNode[S]{name: name, fn: fn}
	g.order = append(g.order, name)
	return g
}

// AddEdge makes to run after from. Use Start as from for the entry edge,
// and End as to for an exit. Each node has exactly one way out: one edge or
// one route.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	g.addOut(from, &graphOut[S]{to: to})
	return g
}

// AddRoute makes the node after from depend on the state: route returns an
// outcome, and routes maps each outcome to the node that runs next. Every
// outcome route can return must be a key of routes; an unknown outcome
// fails the thread with an error that names it. Use Start as from for a
// conditional entry.
func (g *Graph[S]) AddRoute(from string, route func(s S) string, routes Routes) *Graph[S] {
	if route == nil {
		g.fail(from, "has a nil route function")
		return g
	}
	if len(routes) == 0 {
		g.fail(from, "has a route with no targets")
		return g
	}
	g.addOut(from, &graphOut[S]{route: route, routes: maps.Clone(routes)})
	return g
}

func (g *Graph[S]) addOut(from string, out *graphOut[S]) {
	if from == End {
		g.fail(End, "cannot have an outgoing edge")
		return
	}
	if _, dup := g.outs[from]; dup {
		g.fail(from, "has more than one outgoing edge or route; use AddRoute to branch")
		return
	}
	g.outs[from] = out
	g.froms = append(g.froms, from)
}

func (g *Graph[S]) fail(node, problem string) {
	g.errs = append(g.errs, &NodeError{Node: node, Err: fmt.Errorf("%w: %s", ErrInvalidGraph, problem)})
}

// Validate reports every problem with the graph at once, joined with
// errors.Join. Each problem is a *NodeError naming its node and wrapping
// ErrInvalidGraph. It finds unknown and duplicate names, a missing entry
// edge, unreachable nodes, nodes with no way out, and nodes from which End
// cannot be reached.
func (g *Graph[S]) Validate() error {
	errs := slices.Clone(g.errs)
	bad := func(node, format string, args ...any) {
		errs = append(errs, &NodeError{Node: node, Err: fmt.Errorf("%w: "+format, append([]any{ErrInvalidGraph}, args...)...)})
	}
	for _, from := range g.froms {
		if from != Start && g.nodes[from] == nil {
			bad(from, "has an outgoing edge but is not a node")
		}
		for _, to := range g.outs[from].targets() {
			if to == Start {
				bad(from, "has an edge to Start; the entry cannot be re-entered")
			} else if to != End && g.nodes[to] == nil {
				bad(from, "has an edge to unknown node %q", to)
			}
		}
	}
	if g.outs[Start] == nil {
		bad(Start, "has no edge: add one with AddEdge(magen.Start, first)")
	}
	reach := g.reachable()
	for _, name := range g.order {
		switch {
		case g.outs[name] == nil:
			bad(name, "has no way out: add an edge or a route")
		case !reach[name]:
			bad(name, "cannot be reached from Start")
		}
	}
	canEnd := g.canReachEnd()
	for _, name := range g.order {
		if reach[name] && g.outs[name] != nil && !canEnd[name] {
			bad(name, "can never reach End: every path from it loops forever")
		}
	}
	return errors.Join(errs...)
}

// reachable returns the nodes reachable from Start.
func (g *Graph[S]) reachable() map[string]bool {
	seen := map[string]bool{Start: true}
	stack := []string{Start}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out := g.outs[n]
		if out == nil {
			continue
		}
		for _, t := range out.targets() {
			if !seen[t] {
				seen[t] = true
				stack = append(stack, t)
			}
		}
	}
	return seen
}

// canReachEnd returns the nodes from which some path leads to End.
func (g *Graph[S]) canReachEnd() map[string]bool {
	ok := map[string]bool{End: true}
	for changed := true; changed; {
		changed = false
		for from, out := range g.outs {
			if ok[from] {
				continue
			}
			for _, t := range out.targets() {
				if ok[t] {
					ok[from] = true
					changed = true
					break
				}
			}
		}
	}
	return ok
}

// Mermaid returns a Mermaid flowchart of the graph. Routed edges are drawn
// dotted and labelled with their outcome.
func (g *Graph[S]) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	ids := map[string]string{Start: "start", End: "stop"}
	fmt.Fprintf(&b, "    start([%s])\n", "start")
	for i, name := range g.order {
		id := fmt.Sprintf("n%d", i)
		ids[name] = id
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", id, name)
	}
	fmt.Fprintf(&b, "    stop([%s])\n", "end")
	id := func(name string) string {
		if s, ok := ids[name]; ok {
			return s
		}
		return "unknown_" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, name)
	}
	for _, from := range g.froms {
		out := g.outs[from]
		if out.route == nil {
			fmt.Fprintf(&b, "    %s --> %s\n", id(from), id(out.to))
			continue
		}
		for _, outcome := range slices.Sorted(maps.Keys(out.routes)) {
			fmt.Fprintf(&b, "    %s -. \"%s\" .-> %s\n", id(from), strings.ReplaceAll(outcome, `"`, "#quot;"), id(out.routes[outcome]))
		}
	}
	return b.String()
}

// compiledGraph is the immutable snapshot an orchestrator runs.
type compiledGraph[S any] struct {
	nodes map[string]NodeFunc[S]
	outs  map[string]graphOut[S]
}

func (g *Graph[S]) compile() *compiledGraph[S] {
	c := &compiledGraph[S]{
		nodes: make(map[string]NodeFunc[S], len(g.nodes)),
		outs:  make(map[string]graphOut[S], len(g.outs)),
	}
	for name, n := range g.nodes {
		c.nodes[name] = n.fn
	}
	for from, out := range g.outs {
		c.outs[from] = *out
	}
	return c
}

// next returns the node after from, given the state from produced. A
// panicking route function is an error, as a panicking node is.
func (c *compiledGraph[S]) next(from string, s S) (_ string, err error) {
	out := c.outs[from]
	if out.route == nil {
		return out.to, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("route after %q panicked: %v", from, r)
		}
	}()
	outcome := out.route(s)
	to, ok := out.routes[outcome]
	if !ok {
		return "", fmt.Errorf("route after %q returned %q, which is not one of its outcomes %q", from, outcome, slices.Sorted(maps.Keys(out.routes)))
	}
	return to, nil
}
