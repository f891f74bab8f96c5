package frontend

// Stretch is the budget bookkeeping of a back end while it emits slots in
// order. The interpreter charges the budget per stretch: the slots up to
// and including a charging instruction (a jump, call or exit), or up to
// the start of a block (Analysis.Starts), which a stretch may fall into.
// Generated code subtracts a stretch's length once, at its charging
// instruction, where the subtraction is also the test of the budget: until
// then the stretch is Uncharged. Start is its first slot.
type Stretch struct {
	Start     int
	Uncharged bool
}

// Begin starts a stretch at slot pc: a block starts there.
func (s *Stretch) Begin(pc int) { s.Start, s.Uncharged = pc, true }

// Pending returns how many slots before end the stretch has not charged
// yet: 0 once charged.
func (s *Stretch) Pending(end int) int {
	if !s.Uncharged {
		return 0
	}
	return end - s.Start
}

// Charged records that the code charged the stretch.
func (s *Stretch) Charged() { s.Uncharged = false }

// Next is called after the code of slot pc: if it charged the budget, the
// interpreter's next stretch starts after it, whether or not a block
// does.
func (s *Stretch) Next(pc int) {
	if !s.Uncharged {
		s.Begin(pc + 1)
	}
}
