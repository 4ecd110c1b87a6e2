// The declarations a BrookGPU program wrote by hand for the kernels of brookgpu_separate_host.br.
void krn_CopyStream(const ::brook::stream& in, ::brook::stream& out);
void krn_Scale(const ::brook::stream& in, const float k, ::brook::stream& out);
void krn_Coords(const __BRTIter& it, ::brook::stream& c);
void krn_Pick(const ::brook::stream& table, const ::brook::stream& where, ::brook::stream& o);
void krn_Sum(const ::brook::stream& in, float& s);
void krn_Sum(const ::brook::stream& in, ::brook::stream& s);
void krn_Move(const ::brook::stream& p, const float dt, ::brook::stream& q);
