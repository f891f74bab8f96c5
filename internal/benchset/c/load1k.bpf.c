//go:build ignore

// load1k: a program of about 1000 instructions with a map and global data,
// to measure loading (BenchmarkLoad1k). Its body is generated: 120 steps of
// arithmetic on the context.
#include "uebpf_helpers.h"

struct input {
	__u64 v[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, __u64);
} results SEC(".maps");

const volatile __u64 seed = 7;

SEC("uebpf/bench")
__u64 load1k(struct input *c)
{
	__u64 acc = seed;
	__u32 key = 0;

	acc = acc * 31 + c->v[0] + 0;
	if (acc & (1ULL << 0))
		acc ^= 0ULL;
	acc = acc * 31 + c->v[1] + 1;
	if (acc & (1ULL << 1))
		acc ^= 506952113ULL;
	acc = acc * 31 + c->v[2] + 2;
	if (acc & (1ULL << 2))
		acc ^= 1013904226ULL;
	acc = acc * 31 + c->v[3] + 3;
	if (acc & (1ULL << 3))
		acc ^= 1520856339ULL;
	acc = acc * 31 + c->v[4] + 4;
	if (acc & (1ULL << 4))
		acc ^= 2027808452ULL;
	acc = acc * 31 + c->v[5] + 5;
	if (acc & (1ULL << 5))
		acc ^= 387276917ULL;
	acc = acc * 31 + c->v[6] + 6;
	if (acc & (1ULL << 6))
		acc ^= 894229030ULL;
	acc = acc * 31 + c->v[7] + 7;
	if (acc & (1ULL << 7))
		acc ^= 1401181143ULL;
	acc = acc * 31 + c->v[8] + 8;
	if (acc & (1ULL << 8))
		acc ^= 1908133256ULL;
	acc = acc * 31 + c->v[9] + 9;
	if (acc & (1ULL << 9))
		acc ^= 267601721ULL;
	acc = acc * 31 + c->v[10] + 10;
	if (acc & (1ULL << 10))
		acc ^= 774553834ULL;
	acc = acc * 31 + c->v[11] + 11;
	if (acc & (1ULL << 11))
		acc ^= 1281505947ULL;
	acc = acc * 31 + c->v[12] + 12;
	if (acc & (1ULL << 12))
		acc ^= 1788458060ULL;
	acc = acc * 31 + c->v[13] + 13;
	if (acc & (1ULL << 13))
		acc ^= 147926525ULL;
	acc = acc * 31 + c->v[14] + 14;
	if (acc & (1ULL << 14))
		acc ^= 654878638ULL;
	acc = acc * 31 + c->v[15] + 15;
	if (acc & (1ULL << 15))
		acc ^= 1161830751ULL;
	acc = acc * 31 + c->v[0] + 16;
	if (acc & (1ULL << 16))
		acc ^= 1668782864ULL;
	acc = acc * 31 + c->v[1] + 17;
	if (acc & (1ULL << 17))
		acc ^= 28251329ULL;
	acc = acc * 31 + c->v[2] + 18;
	if (acc & (1ULL << 18))
		acc ^= 535203442ULL;
	acc = acc * 31 + c->v[3] + 19;
	if (acc & (1ULL << 19))
		acc ^= 1042155555ULL;
	acc = acc * 31 + c->v[4] + 20;
	if (acc & (1ULL << 20))
		acc ^= 1549107668ULL;
	acc = acc * 31 + c->v[5] + 21;
	if (acc & (1ULL << 21))
		acc ^= 2056059781ULL;
	acc = acc * 31 + c->v[6] + 22;
	if (acc & (1ULL << 22))
		acc ^= 415528246ULL;
	acc = acc * 31 + c->v[7] + 23;
	if (acc & (1ULL << 23))
		acc ^= 922480359ULL;
	acc = acc * 31 + c->v[8] + 24;
	if (acc & (1ULL << 24))
		acc ^= 1429432472ULL;
	acc = acc * 31 + c->v[9] + 25;
	if (acc & (1ULL << 25))
		acc ^= 1936384585ULL;
	acc = acc * 31 + c->v[10] + 26;
	if (acc & (1ULL << 26))
		acc ^= 295853050ULL;
	acc = acc * 31 + c->v[11] + 27;
	if (acc & (1ULL << 27))
		acc ^= 802805163ULL;
	acc = acc * 31 + c->v[12] + 28;
	if (acc & (1ULL << 28))
		acc ^= 1309757276ULL;
	acc = acc * 31 + c->v[13] + 29;
	if (acc & (1ULL << 29))
		acc ^= 1816709389ULL;
	acc = acc * 31 + c->v[14] + 30;
	if (acc & (1ULL << 30))
		acc ^= 176177854ULL;
	acc = acc * 31 + c->v[15] + 31;
	if (acc & (1ULL << 31))
		acc ^= 683129967ULL;
	acc = acc * 31 + c->v[0] + 32;
	if (acc & (1ULL << 32))
		acc ^= 1190082080ULL;
	acc = acc * 31 + c->v[1] + 33;
	if (acc & (1ULL << 33))
		acc ^= 1697034193ULL;
	acc = acc * 31 + c->v[2] + 34;
	if (acc & (1ULL << 34))
		acc ^= 56502658ULL;
	acc = acc * 31 + c->v[3] + 35;
	if (acc & (1ULL << 35))
		acc ^= 563454771ULL;
	acc = acc * 31 + c->v[4] + 36;
	if (acc & (1ULL << 36))
		acc ^= 1070406884ULL;
	acc = acc * 31 + c->v[5] + 37;
	if (acc & (1ULL << 37))
		acc ^= 1577358997ULL;
	acc = acc * 31 + c->v[6] + 38;
	if (acc & (1ULL << 38))
		acc ^= 2084311110ULL;
	acc = acc * 31 + c->v[7] + 39;
	if (acc & (1ULL << 39))
		acc ^= 443779575ULL;
	acc = acc * 31 + c->v[8] + 40;
	if (acc & (1ULL << 40))
		acc ^= 950731688ULL;
	acc = acc * 31 + c->v[9] + 41;
	if (acc & (1ULL << 41))
		acc ^= 1457683801ULL;
	acc = acc * 31 + c->v[10] + 42;
	if (acc & (1ULL << 42))
		acc ^= 1964635914ULL;
	acc = acc * 31 + c->v[11] + 43;
	if (acc & (1ULL << 43))
		acc ^= 324104379ULL;
	acc = acc * 31 + c->v[12] + 44;
	if (acc & (1ULL << 44))
		acc ^= 831056492ULL;
	acc = acc * 31 + c->v[13] + 45;
	if (acc & (1ULL << 45))
		acc ^= 1338008605ULL;
	acc = acc * 31 + c->v[14] + 46;
	if (acc & (1ULL << 46))
		acc ^= 1844960718ULL;
	acc = acc * 31 + c->v[15] + 47;
	if (acc & (1ULL << 47))
		acc ^= 204429183ULL;
	acc = acc * 31 + c->v[0] + 48;
	if (acc & (1ULL << 48))
		acc ^= 711381296ULL;
	acc = acc * 31 + c->v[1] + 49;
	if (acc & (1ULL << 49))
		acc ^= 1218333409ULL;
	acc = acc * 31 + c->v[2] + 50;
	if (acc & (1ULL << 50))
		acc ^= 1725285522ULL;
	acc = acc * 31 + c->v[3] + 51;
	if (acc & (1ULL << 51))
		acc ^= 84753987ULL;
	acc = acc * 31 + c->v[4] + 52;
	if (acc & (1ULL << 52))
		acc ^= 591706100ULL;
	acc = acc * 31 + c->v[5] + 53;
	if (acc & (1ULL << 53))
		acc ^= 1098658213ULL;
	acc = acc * 31 + c->v[6] + 54;
	if (acc & (1ULL << 54))
		acc ^= 1605610326ULL;
	acc = acc * 31 + c->v[7] + 55;
	if (acc & (1ULL << 55))
		acc ^= 2112562439ULL;
	acc = acc * 31 + c->v[8] + 56;
	if (acc & (1ULL << 56))
		acc ^= 472030904ULL;
	acc = acc * 31 + c->v[9] + 57;
	if (acc & (1ULL << 57))
		acc ^= 978983017ULL;
	acc = acc * 31 + c->v[10] + 58;
	if (acc & (1ULL << 58))
		acc ^= 1485935130ULL;
	acc = acc * 31 + c->v[11] + 59;
	if (acc & (1ULL << 59))
		acc ^= 1992887243ULL;
	acc = acc * 31 + c->v[12] + 60;
	if (acc & (1ULL << 60))
		acc ^= 352355708ULL;
	acc = acc * 31 + c->v[13] + 61;
	if (acc & (1ULL << 61))
		acc ^= 859307821ULL;
	acc = acc * 31 + c->v[14] + 62;
	if (acc & (1ULL << 62))
		acc ^= 1366259934ULL;
	acc = acc * 31 + c->v[15] + 63;
	if (acc & (1ULL << 63))
		acc ^= 1873212047ULL;
	acc = acc * 31 + c->v[0] + 64;
	if (acc & (1ULL << 0))
		acc ^= 232680512ULL;
	acc = acc * 31 + c->v[1] + 65;
	if (acc & (1ULL << 1))
		acc ^= 739632625ULL;
	acc = acc * 31 + c->v[2] + 66;
	if (acc & (1ULL << 2))
		acc ^= 1246584738ULL;
	acc = acc * 31 + c->v[3] + 67;
	if (acc & (1ULL << 3))
		acc ^= 1753536851ULL;
	acc = acc * 31 + c->v[4] + 68;
	if (acc & (1ULL << 4))
		acc ^= 113005316ULL;
	acc = acc * 31 + c->v[5] + 69;
	if (acc & (1ULL << 5))
		acc ^= 619957429ULL;
	acc = acc * 31 + c->v[6] + 70;
	if (acc & (1ULL << 6))
		acc ^= 1126909542ULL;
	acc = acc * 31 + c->v[7] + 71;
	if (acc & (1ULL << 7))
		acc ^= 1633861655ULL;
	acc = acc * 31 + c->v[8] + 72;
	if (acc & (1ULL << 8))
		acc ^= 2140813768ULL;
	acc = acc * 31 + c->v[9] + 73;
	if (acc & (1ULL << 9))
		acc ^= 500282233ULL;
	acc = acc * 31 + c->v[10] + 74;
	if (acc & (1ULL << 10))
		acc ^= 1007234346ULL;
	acc = acc * 31 + c->v[11] + 75;
	if (acc & (1ULL << 11))
		acc ^= 1514186459ULL;
	acc = acc * 31 + c->v[12] + 76;
	if (acc & (1ULL << 12))
		acc ^= 2021138572ULL;
	acc = acc * 31 + c->v[13] + 77;
	if (acc & (1ULL << 13))
		acc ^= 380607037ULL;
	acc = acc * 31 + c->v[14] + 78;
	if (acc & (1ULL << 14))
		acc ^= 887559150ULL;
	acc = acc * 31 + c->v[15] + 79;
	if (acc & (1ULL << 15))
		acc ^= 1394511263ULL;
	acc = acc * 31 + c->v[0] + 80;
	if (acc & (1ULL << 16))
		acc ^= 1901463376ULL;
	acc = acc * 31 + c->v[1] + 81;
	if (acc & (1ULL << 17))
		acc ^= 260931841ULL;
	acc = acc * 31 + c->v[2] + 82;
	if (acc & (1ULL << 18))
		acc ^= 767883954ULL;
	acc = acc * 31 + c->v[3] + 83;
	if (acc & (1ULL << 19))
		acc ^= 1274836067ULL;
	acc = acc * 31 + c->v[4] + 84;
	if (acc & (1ULL << 20))
		acc ^= 1781788180ULL;
	acc = acc * 31 + c->v[5] + 85;
	if (acc & (1ULL << 21))
		acc ^= 141256645ULL;
	acc = acc * 31 + c->v[6] + 86;
	if (acc & (1ULL << 22))
		acc ^= 648208758ULL;
	acc = acc * 31 + c->v[7] + 87;
	if (acc & (1ULL << 23))
		acc ^= 1155160871ULL;
	acc = acc * 31 + c->v[8] + 88;
	if (acc & (1ULL << 24))
		acc ^= 1662112984ULL;
	acc = acc * 31 + c->v[9] + 89;
	if (acc & (1ULL << 25))
		acc ^= 21581449ULL;
	acc = acc * 31 + c->v[10] + 90;
	if (acc & (1ULL << 26))
		acc ^= 528533562ULL;
	acc = acc * 31 + c->v[11] + 91;
	if (acc & (1ULL << 27))
		acc ^= 1035485675ULL;
	acc = acc * 31 + c->v[12] + 92;
	if (acc & (1ULL << 28))
		acc ^= 1542437788ULL;
	acc = acc * 31 + c->v[13] + 93;
	if (acc & (1ULL << 29))
		acc ^= 2049389901ULL;
	acc = acc * 31 + c->v[14] + 94;
	if (acc & (1ULL << 30))
		acc ^= 408858366ULL;
	acc = acc * 31 + c->v[15] + 95;
	if (acc & (1ULL << 31))
		acc ^= 915810479ULL;
	acc = acc * 31 + c->v[0] + 96;
	if (acc & (1ULL << 32))
		acc ^= 1422762592ULL;
	acc = acc * 31 + c->v[1] + 97;
	if (acc & (1ULL << 33))
		acc ^= 1929714705ULL;
	acc = acc * 31 + c->v[2] + 98;
	if (acc & (1ULL << 34))
		acc ^= 289183170ULL;
	acc = acc * 31 + c->v[3] + 99;
	if (acc & (1ULL << 35))
		acc ^= 796135283ULL;
	acc = acc * 31 + c->v[4] + 100;
	if (acc & (1ULL << 36))
		acc ^= 1303087396ULL;
	acc = acc * 31 + c->v[5] + 101;
	if (acc & (1ULL << 37))
		acc ^= 1810039509ULL;
	acc = acc * 31 + c->v[6] + 102;
	if (acc & (1ULL << 38))
		acc ^= 169507974ULL;
	acc = acc * 31 + c->v[7] + 103;
	if (acc & (1ULL << 39))
		acc ^= 676460087ULL;
	acc = acc * 31 + c->v[8] + 104;
	if (acc & (1ULL << 40))
		acc ^= 1183412200ULL;
	acc = acc * 31 + c->v[9] + 105;
	if (acc & (1ULL << 41))
		acc ^= 1690364313ULL;
	acc = acc * 31 + c->v[10] + 106;
	if (acc & (1ULL << 42))
		acc ^= 49832778ULL;
	acc = acc * 31 + c->v[11] + 107;
	if (acc & (1ULL << 43))
		acc ^= 556784891ULL;
	acc = acc * 31 + c->v[12] + 108;
	if (acc & (1ULL << 44))
		acc ^= 1063737004ULL;
	acc = acc * 31 + c->v[13] + 109;
	if (acc & (1ULL << 45))
		acc ^= 1570689117ULL;
	acc = acc * 31 + c->v[14] + 110;
	if (acc & (1ULL << 46))
		acc ^= 2077641230ULL;
	acc = acc * 31 + c->v[15] + 111;
	if (acc & (1ULL << 47))
		acc ^= 437109695ULL;
	acc = acc * 31 + c->v[0] + 112;
	if (acc & (1ULL << 48))
		acc ^= 944061808ULL;
	acc = acc * 31 + c->v[1] + 113;
	if (acc & (1ULL << 49))
		acc ^= 1451013921ULL;
	acc = acc * 31 + c->v[2] + 114;
	if (acc & (1ULL << 50))
		acc ^= 1957966034ULL;
	acc = acc * 31 + c->v[3] + 115;
	if (acc & (1ULL << 51))
		acc ^= 317434499ULL;
	acc = acc * 31 + c->v[4] + 116;
	if (acc & (1ULL << 52))
		acc ^= 824386612ULL;
	acc = acc * 31 + c->v[5] + 117;
	if (acc & (1ULL << 53))
		acc ^= 1331338725ULL;
	acc = acc * 31 + c->v[6] + 118;
	if (acc & (1ULL << 54))
		acc ^= 1838290838ULL;
	acc = acc * 31 + c->v[7] + 119;
	if (acc & (1ULL << 55))
		acc ^= 197759303ULL;
	bpf_map_update_elem(&results, &key, &acc, BPF_ANY);
	return acc;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
