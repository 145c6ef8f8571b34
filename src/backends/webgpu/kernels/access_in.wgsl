fn BUF_word(w: u32) -> u32 { return BUF[w]; }
