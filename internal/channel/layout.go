package channel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Magic starts every data file.
const Magic = "uebpfch1"

// Version is the layout's version.
const Version = 1

// Offsets in the data file's header.
const (
	offMagic       = 0
	offVersion     = 8
	offMode        = 12
	offShards      = 16
	offFlags       = 20
	offShardSize   = 24
	offMetaOff     = 32
	offMetaCap     = 40
	offDataOff     = 48
	offSize        = 56
	offPID         = 64
	offClockOffset = 72
	offCreated     = 80
	offState       = 88
	offMetaLen     = 96
	offProcname    = 104
	headerFixed    = 128 // where the shards' lines start
)

// Offsets in a shard's line of the header.
const (
	lineOffset      = 0
	lineSize        = 8
	lineHead        = 16
	lineTail        = 24
	lineRecords     = 32
	lineDropped     = 40
	lineOverwritten = 48
	shardLine       = 64 // bytes per shard, in the header and in the positions file
)

// Record framing.
const (
	// RecordHeaderSize is the length and tag in front of a record's body.
	RecordHeaderSize = 8
	padFlag          = 1 << 31
)

// Limits of a layout, which consumers check before they trust one.
const (
	MaxShards    = 1024
	MinShardSize = 4096
	MaxShardSize = 1 << 30
	// MaxMetaSize bounds the metadata area.
	MaxMetaSize = 16 << 20
	pageSize    = 4096 // the layout's unit; a multiple of every page size uebpf runs on but 16K/64K ones, where mmap offsets stay 0
)

// Mode is what a producer does with a record that finds its ring full.
type Mode uint32

const (
	// Discard drops the new record and counts it.
	Discard Mode = iota
	// Overwrite drops the oldest records to make room (a flight recorder).
	Overwrite
	// Block waits for the consumer to make room, up to a timeout, then
	// drops.
	Block
)

func (m Mode) String() string {
	switch m {
	case Discard:
		return "discard"
	case Overwrite:
		return "overwrite"
	case Block:
		return "block"
	}
	return fmt.Sprintf("mode(%d)", uint32(m))
}

// State values.
const (
	stateLive   = 0
	stateClosed = 1
)

// ErrCorrupt reports a channel whose files do not hold what the layout
// says: a consumer refuses them, or the part it could not read.
var ErrCorrupt = errors.New("corrupt channel")

// Header is what a data file's header says, as a consumer read and
// checked it.
type Header struct {
	Mode      Mode
	Shards    int
	ShardSize uint64 // of the per-P shards; the last may be smaller
	MetaCap   uint64
	Size      uint64 // of the data file
	PID       int64
	// ClockOffset is CLOCK_REALTIME - CLOCK_MONOTONIC on the producer's
	// machine when the channel was made, in ns.
	ClockOffset int64
	// Created is CLOCK_MONOTONIC when the channel was made.
	Created  uint64
	Procname string
}

// Time converts a CLOCK_MONOTONIC timestamp of the channel's records to
// wall time.
func (h *Header) Time(ts uint64) time.Time { return time.Unix(0, int64(ts)+h.ClockOffset) }

// ShardStats are a shard's counters, as the producer publishes them.
type ShardStats struct {
	Records     uint64 // written
	Dropped     uint64 // refused: no room
	Overwritten uint64 // made room for newer ones (overwrite mode)
}

func (s *ShardStats) add(t ShardStats) {
	s.Records += t.Records
	s.Dropped += t.Dropped
	s.Overwritten += t.Overwritten
}

// littleEndian: the machine's byte order is the layout's, so a word is
// stored as it is.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

func roundPage(n uint64) uint64 { return (n + pageSize - 1) &^ (pageSize - 1) }

// headerSize is the header's size for n shards.
func headerSize(n int) uint64 { return roundPage(headerFixed + uint64(n)*shardLine) }

// positionsSize is the positions file's size for n shards.
func positionsSize(n int) uint64 { return roundPage(uint64(n) * shardLine) }
