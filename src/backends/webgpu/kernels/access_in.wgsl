fn BUF_word(p_w: u32) -> u32 { return BUF[p_w]; }
