package frontend

import "testing"

// A stretch charges once, and the next starts after a slot that charged.
func TestStretch(t *testing.T) {
	var s Stretch
	s.Begin(3)
	if n := s.Pending(6); n != 3 {
		t.Fatalf("Pending(6) = %d, want 3", n)
	}
	s.Next(5) // slot 5 charged nothing
	if !s.Uncharged || s.Start != 3 {
		t.Fatalf("Next of an uncharged stretch moved it: %+v", s)
	}
	s.Charged()
	if n := s.Pending(7); n != 0 {
		t.Errorf("Pending after Charged = %d", n)
	}
	s.Next(6)
	if !s.Uncharged || s.Start != 7 {
		t.Errorf("after a charging slot 6: %+v, want a stretch at 7", s)
	}
}
